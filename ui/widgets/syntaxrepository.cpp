#include "widgets/syntaxrepository.h"

#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/Theme>

#include <QPalette>

namespace ak {

KSyntaxHighlighting::Repository &syntaxRepository()
{
    static KSyntaxHighlighting::Repository repository;
    return repository;
}

KSyntaxHighlighting::Theme syntaxTheme(const QPalette &palette)
{
    const bool dark = palette.color(QPalette::Base).lightness() < 128;
    return syntaxRepository().defaultTheme(
        dark ? KSyntaxHighlighting::Repository::DarkTheme : KSyntaxHighlighting::Repository::LightTheme);
}

} // namespace ak
