print('xrange has_key `x` <> 0777')
