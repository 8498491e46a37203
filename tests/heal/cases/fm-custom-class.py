class Stack:
    pass

Stack().push(1)
