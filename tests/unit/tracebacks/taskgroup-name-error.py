import asyncio


async def area(r):
    await asyncio.sleep(0)
    return math.pi * r * r


async def main():
    async with asyncio.TaskGroup() as tg:
        t = tg.create_task(area(2))
    print(t.result())


asyncio.run(main())
