print('```')
