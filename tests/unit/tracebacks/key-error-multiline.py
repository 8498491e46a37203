class Cell:
    def __init__(self, row, col):
        self.row, self.col = row, col

    def __repr__(self):
        return f"Cell(\n  row={self.row},\n  col={self.col}\n)"

    def __hash__(self):
        return hash((self.row, self.col))


grid = {}
print(grid[Cell(1, 2)])
