class A:
    def __init__(self):
        self.value = 1
        self.valve = 2

a = A()
print(a.vale)
