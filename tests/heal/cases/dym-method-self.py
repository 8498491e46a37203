class C:
    def __init__(self):
        self.count = 5
    def get(self):
        return self.coutn

print(C().get())
