from datetime import date, datetime, timedelta, timezone

start = datetime(2024, 2, 27, 22, 30, tzinfo=timezone.utc)
for days in (1, 2, 3):
    t = start + timedelta(days=days, hours=3)
    print(t.strftime("%Y-%m-%d %H:%M %Z"), t.weekday())
d = date(2024, 12, 31)
print((d - date(2024, 1, 1)).days + 1, d.isoformat(), date.fromisoformat("2025-03-01").replace(day=15))
