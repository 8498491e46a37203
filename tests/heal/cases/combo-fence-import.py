```python
print(math.sqrt(16))
```
