class Stack:
    def __init__(self):
        self.items = []
    def push(self, x):
        self.items.append(x)

s = Stack()
s.push(5)
print(s.items)
