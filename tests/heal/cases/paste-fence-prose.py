Here is the code:

```python
x = 3
print(x)
```

It prints 3.
