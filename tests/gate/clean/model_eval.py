import ast


class Model:
    def __init__(self):
        self.training = True

    def eval(self):
        self.training = False
        return self

    def compile(self, optimizer="sgd"):
        return f"compiled with {optimizer}"


def compile_report(rows):
    return "\n".join(rows)


model = Model()
model.eval()
print(model.training, model.compile())
print(ast.literal_eval("[1, 2, {'a': 3}]"))
print(compile_report(["a", "b"]))
