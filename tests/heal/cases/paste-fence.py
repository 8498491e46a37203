```python
print('hi')
```
