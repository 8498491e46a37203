class ConfigError(Exception):
    """Raised for bad configuration."""


class MissingKey(ConfigError):
    def __init__(self, key):
        super().__init__(f"missing key: {key}")
        self.key = key


def read(conf, key):
    if key not in conf:
        raise MissingKey(key)
    return conf[key]


conf = {"host": "localhost"}
for key in ("host", "port"):
    try:
        print(key, read(conf, key))
    except MissingKey as e:
        print("default for", e.key)
    except (ConfigError, OSError) as e:
        print("failed:", e)
