doc = '''
```python
x = 1
```
'''
print(doc
