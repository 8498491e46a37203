import asyncio


async def fetch(n):
    await asyncio.sleep(0)
    if n == 2:
        raise ConnectionError(f"fetch {n} failed")
    return n


async def main():
    async with asyncio.TaskGroup() as tg:
        for n in range(3):
            tg.create_task(fetch(n))


asyncio.run(main())
