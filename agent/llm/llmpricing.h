#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>

namespace ak {

struct ModelPrice
{
    double inputPerMTok = 0; // per million prompt tokens
    double outputPerMTok = 0; // per million completion tokens
};

// Per-model prices from the user's settings, used to put a cost on each experiment. A model that is
// not in the table costs 0 (local servers, or a price the user has not entered): never guessed.
class PriceTable
{
public:
    void set(const QString &model, ModelPrice price);
    bool isEmpty() const { return m_prices.isEmpty(); }
    // The exact model name, else the longest entry that is a prefix of it
    // ("claude-sonnet-4" prices "claude-sonnet-4-20250514").
    bool lookup(const QString &model, ModelPrice *out) const;
    double cost(const QString &model, qint64 tokensIn, qint64 tokensOut) const;

    // {"gpt-4.1": {"input": 2.0, "output": 8.0}, ...} as stored in the settings.
    static bool fromJson(const QByteArray &text, PriceTable *out, QString *error);
    QByteArray toJson() const;

private:
    QMap<QString, ModelPrice> m_prices;
};

} // namespace ak
