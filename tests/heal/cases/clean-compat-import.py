try:
    from StringIO import StringIO
except ImportError:
    from io import StringIO
s = StringIO()
s.write('a')
print(s.getvalue())
