print('Pipeline failed')
