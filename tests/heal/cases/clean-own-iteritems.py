class D:
    def iteritems(self):
        return [1]

print(D().iteritems()[0])
