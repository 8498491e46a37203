import bisect
import heapq

tasks = [(3, "write"), (1, "plan"), (2, "code"), (5, "ship")]
heapq.heapify(tasks)
order = [heapq.heappop(tasks)[1] for _ in range(len(tasks))]
print(order, heapq.nlargest(2, [4, 9, 1, 7]))
grades = [60, 70, 80, 90]
print(["FDCBA"[bisect.bisect(grades, s)] for s in (33, 99, 77, 70, 89, 90, 100)])
