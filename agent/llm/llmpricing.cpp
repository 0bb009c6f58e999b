#include "llm/llmpricing.h"

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace ak {

void PriceTable::set(const QString &model, ModelPrice price)
{
    m_prices.insert(model.trimmed(), price);
}

bool PriceTable::lookup(const QString &model, ModelPrice *out) const
{
    const auto exact = m_prices.constFind(model);
    if (exact != m_prices.cend()) {
        *out = exact.value();
        return true;
    }
    qsizetype bestLength = 0;
    for (auto it = m_prices.cbegin(); it != m_prices.cend(); ++it) {
        if (!it.key().isEmpty() && model.startsWith(it.key()) && it.key().size() > bestLength) {
            bestLength = it.key().size();
            *out = it.value();
        }
    }
    return bestLength > 0;
}

double PriceTable::cost(const QString &model, qint64 tokensIn, qint64 tokensOut) const
{
    ModelPrice p;
    if (!lookup(model, &p))
        return 0;
    return (double(tokensIn) * p.inputPerMTok + double(tokensOut) * p.outputPerMTok) / 1e6;
}

bool PriceTable::fromJson(const QByteArray &text, PriceTable *out, QString *error)
{
    const json j = json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
    auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("price table: ") + why;
        return false;
    };
    if (j.is_discarded() || !j.is_object())
        return fail(QStringLiteral("not a JSON object"));
    PriceTable table;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const QString model = QString::fromStdString(it.key());
        const json &v = it.value();
        if (!v.is_object())
            return fail(QStringLiteral("\"%1\": expected {\"input\": N, \"output\": N}").arg(model));
        ModelPrice p;
        for (const char *field : { "input", "output" }) {
            const auto f = v.find(field);
            if (f == v.end())
                continue;
            if (!f->is_number() || f->get<double>() < 0)
                return fail(QStringLiteral("\"%1\".%2: expected a non-negative number")
                                .arg(model, QLatin1String(field)));
            (std::string(field) == "input" ? p.inputPerMTok : p.outputPerMTok) = f->get<double>();
        }
        table.set(model, p);
    }
    *out = table;
    return true;
}

QByteArray PriceTable::toJson() const
{
    json j = json::object();
    for (auto it = m_prices.cbegin(); it != m_prices.cend(); ++it)
        j[it.key().toStdString()]
            = { { "input", it.value().inputPerMTok }, { "output", it.value().outputPerMTok } };
    return QByteArray::fromStdString(j.dump(2));
}

} // namespace ak
