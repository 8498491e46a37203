config = {"host": "localhost", "port": 8080}
print("connecting")
user = config["user"]
print(user)
