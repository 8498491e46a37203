class G:
    def greet(self):
        return 'hi'

print(G().gret())
