1. Run this:

   ```python
   if True:
       print('yes')
   ```
