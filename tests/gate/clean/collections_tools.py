from collections import OrderedDict, defaultdict, deque, namedtuple

graph = defaultdict(list)
for a, b in [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")]:
    graph[a].append(b)


def bfs(start):
    seen, queue, order = {start}, deque([start]), []
    while queue:
        node = queue.popleft()
        order.append(node)
        for nxt in graph[node]:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return order


Edge = namedtuple("Edge", "src dst")
cache = OrderedDict()
for e in (Edge(a, b) for a in graph for b in graph[a]):
    cache[e] = len(cache)
    cache.move_to_end(e, last=False)
print(bfs("a"), list(cache)[:2])
