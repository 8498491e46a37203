from StringIO import StringIO
import cPickle as pickle
s = StringIO()
s.write('a')
print(s.getvalue(), pickle.loads(pickle.dumps(1)))
