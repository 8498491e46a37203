class console:
    @staticmethod
    def log(*a):
        print('LOG', *a)

console.log(1)
