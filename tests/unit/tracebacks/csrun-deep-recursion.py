def walk(node, depth=0):
    children = node.get("children", [])
    return [walk(node, depth + 1) for child in children]


tree = {"name": "root", "children": [{"name": "leaf"}]}
print(walk(tree))
