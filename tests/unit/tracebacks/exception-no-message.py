class PipelineError(Exception):
    pass


def step():
    raise PipelineError()


step()
