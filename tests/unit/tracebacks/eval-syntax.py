expr = "1 +"
print("evaluating")
result = eval(expr)
print(result)
