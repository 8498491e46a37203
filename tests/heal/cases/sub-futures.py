import concurrent
with concurrent.futures.ThreadPoolExecutor(1) as ex:
    print(ex.submit(len, 'ab').result())
