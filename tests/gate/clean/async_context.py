import asyncio


class Resource:
    async def __aenter__(self):
        print("open")
        return self

    async def __aexit__(self, *exc):
        print("close")
        return False


async def ticker(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


async def main():
    async with Resource() as r:
        values = [i async for i in ticker(3)]
        async for i in ticker(2):
            print("tick", i)
    print(type(r).__name__, values)


asyncio.run(main())
