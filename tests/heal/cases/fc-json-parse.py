data = JSON.parse('[1, 2]')
print(data)
