First:
```python
x = 1
```
Then:
```python
print(x)
```
