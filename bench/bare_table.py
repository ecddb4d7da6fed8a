"""The floor of issue 31's first-paint goal: a bare Textual app drawing one table of the
bundled sample's group names (nothing read, nothing computed), started the way ``roofscope
open`` is. ``bench/startup.py`` times it to the same marker as roofscope's Kernels table."""

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Footer, Header

ROWS = ["conv fprop", "batch norm", "conv dgrad", "conv wgrad", "elementwise", "GEMM", "pooling"]


class BareTable(App):
    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable()
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("group", "launches", "time")
        for i, name in enumerate(ROWS):
            table.add_row(name, str(10 * i), f"{i}.0 ms")


if __name__ == "__main__":
    BareTable().run()
