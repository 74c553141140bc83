"""Study's pages: the dashboard and its exports, the practice builder, bookmarks."""
