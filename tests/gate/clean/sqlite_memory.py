import sqlite3

con = sqlite3.connect(":memory:")
cur = con.cursor()
cur.execute("CREATE TABLE t (name TEXT, score INTEGER)")
cur.executemany("INSERT INTO t VALUES (?, ?)", [("a", 3), ("b", 9), ("c", 5)])
con.commit()
for row in cur.execute("SELECT name, score FROM t WHERE score > ? ORDER BY score DESC", (4,)):
    print(row)
try:
    cur.execute("SELECT nope FROM t")
except sqlite3.OperationalError as e:
    print("sql error:", e)
con.close()
