class ConfigError(Exception):
    pass


def load(cfg):
    try:
        return cfg["path"]
    except KeyError as e:
        raise ConfigError("missing setting: path") from e


load({})
