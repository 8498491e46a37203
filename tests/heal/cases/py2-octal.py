print(0777)
