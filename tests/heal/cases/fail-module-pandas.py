import pandas as pd
print(pd.DataFrame())
