#include "agentconfig.h"

namespace ak {

QString AgentConfig::kindName(Kind k)
{
    switch (k) {
    case Kind::Tune: return QStringLiteral("tune");
    case Kind::Llm: return QStringLiteral("llm");
    case Kind::Command: return QStringLiteral("command");
    case Kind::Replay: return QStringLiteral("replay");
    }
    return QString();
}

QStringList AgentConfig::kindNames()
{
    return {kindName(Kind::Tune), kindName(Kind::Llm), kindName(Kind::Command), kindName(Kind::Replay)};
}

bool AgentConfig::parseKind(const QString &text, Kind *out)
{
    for (Kind k : {Kind::Tune, Kind::Llm, Kind::Command, Kind::Replay}) {
        if (text.trimmed().toLower() == kindName(k)) {
            if (out)
                *out = k;
            return true;
        }
    }
    return false;
}

} // namespace ak
