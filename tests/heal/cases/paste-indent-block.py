    if True:
        print('yes')
