import asyncio
import random


async def fetch(name: str, delay: float) -> str:
    await asyncio.sleep(delay)
    return f"{name} done after {delay:.3f}s"


async def main() -> None:
    random.seed(7)
    jobs = [fetch(f"job{i}", random.random() / 100) for i in range(5)]
    results = await asyncio.gather(*jobs)
    for line in results:
        print(line)
    try:
        await asyncio.wait_for(asyncio.sleep(1), timeout=0.01)
    except asyncio.TimeoutError:
        print("timed out as expected")


asyncio.run(main())
