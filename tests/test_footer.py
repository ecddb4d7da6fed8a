"""KeysFooter: the footer shows the focused widget's keys, composed again only when they change
(Textual's Footer recomposed on every bindings signal, several per key press)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from roofscope.tui.widgets.footer import KeysFooter


class _Box(Input):
    def __init__(self, key: str, label: str, **kwargs):
        super().__init__(**kwargs)
        self._bindings.bind(key, "app.bell", label)


class _Two(App[None]):
    BINDINGS = [Binding("f10", "bell", "Ring")]

    def compose(self) -> ComposeResult:
        yield _Box("f1", "First", id="one")
        yield _Box("f2", "Second", id="two")
        yield KeysFooter()


def _shown(app: App) -> set[str]:
    return {key.description for key in app.query(FooterKey)}


async def test_footer_follows_the_focus_and_recomposes_only_on_a_change():
    app = _Two()
    async with app.run_test(size=(80, 10)) as pilot:
        footer = app.query_one(KeysFooter)
        recomposes = 0
        real = footer.recompose

        async def counted() -> None:
            nonlocal recomposes
            recomposes += 1
            await real()

        footer.recompose = counted  # type: ignore[method-assign]
        app.query_one("#one").focus()
        await pilot.pause()
        assert {"First", "Ring"} <= _shown(app) and "Second" not in _shown(app)
        recomposes = 0
        app.query_one("#two").focus()
        await pilot.pause()
        assert {"Second", "Ring"} <= _shown(app) and "First" not in _shown(app)
        assert recomposes == 1  # one change of keys, one recompose
        for _ in range(3):  # the same keys signalled again: nothing to redo
            app.refresh_bindings()
            await pilot.pause()
        assert recomposes == 1
        assert {"Second", "Ring"} <= _shown(app)
