import Queue
q = Queue.Queue()
q.put(1)
print(q.get())
