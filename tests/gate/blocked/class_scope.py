# expect: dangerous-call 6
class Runner:
    exec = staticmethod(print)

    def go(self, code):
        exec(code)  # VIOLATION: dangerous-call

    def ok(self, msg):
        self.exec(msg)


Runner().ok("fine")
