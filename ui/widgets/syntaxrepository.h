#pragma once

class QPalette;

namespace KSyntaxHighlighting {
class Repository;
class Theme;
} // namespace KSyntaxHighlighting

namespace ak {

// The one KSyntaxHighlighting::Repository of the application (loading definitions is costly; the
// library's authors recommend a single instance). GUI thread only.
KSyntaxHighlighting::Repository &syntaxRepository();

// The default light or dark theme, chosen from the lightness of the palette's base colour.
KSyntaxHighlighting::Theme syntaxTheme(const QPalette &palette);

} // namespace ak
