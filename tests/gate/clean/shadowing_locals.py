import re


def tokenize(source):
    compile = re.compile  # a local alias of re.compile, not the builtin
    word = compile(r"\w+")
    return word.findall(source)


def apply(eval=None):
    eval = eval or (lambda s: s[::-1])
    return eval("stressed")


class Calculator:
    def eval(self, a, b):
        return a + b

    def twice(self, a, b):
        return self.eval(a, b) * 2


print(tokenize("a tiny test"), apply(), Calculator().twice(2, 3))
print((lambda exec: exec(4))(lambda x: x * 10))
