"""The sample networks `build_sample_feed.py` builds: one `City` each, all fictional.

A path is a start point plus legs; each leg is (street name, [waypoints after the
previous one]). Coordinates: metres east/north of the town centre, in the city's
SIRGAS 2000 / UTM zone. Street, stop, operator and place names are made up (or
generic, as every Brazilian town has a Rua Sete de Setembro), plausible for the region.
"""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[float, float]
Leg = tuple[str, list[Point]]
Path = tuple[Point, list[Leg]]


@dataclass(frozen=True)
class RouteDef:
    route_id: str
    agency_id: str
    long_name: str
    desc: str
    color: str
    outbound: Path
    terminals: tuple[str, str]  # names of the outbound's first and last stop
    headsigns: tuple[str, str]  # direction 0, direction 1
    length_m: tuple[float, float]  # the range each direction's shape must fall in
    # Where the inbound leaves the outbound's streets reversed (a waypoint of the outbound)
    # and the legs it takes from there instead (a one-way street); None: the exact reverse.
    inbound_via: tuple[Point, list[Leg]] | None = None


@dataclass(frozen=True)
class City:
    key: str  # the directory under samples/
    name: str
    state: str  # the `holidays` subdivision
    centre: Point  # lat, lon
    epsg: int  # SIRGAS 2000 / UTM zone of the centre
    timezone: str
    agencies: tuple[tuple[str, str, str], ...]  # agency_id, name, url
    timetabled: RouteDef  # stops 1xxx/11xx, terminals 9001/9002
    headway: RouteDef  # stops 2xxx/21xx, terminals 9003/9004
    landmarks: dict[str, list[str]]  # street -> stop names along it (outbound order)
    municipal_holidays: dict[str, str]  # YYYYMMDD -> name
    feed_version: str
    fleet: tuple[tuple[str, str, str, int], ...]  # vehicle_id, plate, operator_id, capacity
    # --check: YYYYMMDD -> the service that must run that day (None: none)
    expected_services: tuple[tuple[str, str | None], ...]
    # fleet.csv's optional `lines` column (kernel.fleet): vehicle_id -> the route_ids it is
    # licensed for, `|`-separated; empty: no column written (João Neiva's file unchanged)
    fleet_lines: tuple[tuple[str, str], ...] = ()


# --------------------------------------------------------------------------------------
# João Neiva, ES (fictional names, plausible for a town in the interior of Espírito Santo)
# --------------------------------------------------------------------------------------
VARGAS = "Avenida Presidente Vargas"
SETE = "Rua Sete de Setembro"
QUINZE = "Rua Quinze de Novembro"
DOM_PEDRO = "Rua Dom Pedro II"
BEIRA_RIO = "Avenida Beira Rio"
ZANOTTI = "Rua Ângelo Zanotti"
AV_SANTO_ANTONIO = "Avenida Santo Antônio"
SAO_BENEDITO = "Rua São Benedito"
PALMEIRAS = "Rua das Palmeiras"
ANCHIETA = "Rua Padre Anchieta"
VITORIA = "Rua Vitória"
AV_VILA_NOVA = "Avenida Vila Nova"
CASTELO = "Rua Marechal Castelo Branco"
ACACIAS = "Rua das Acácias"
CRAVOS = "Rua dos Cravos"
SANTA_RITA = "Rua Santa Rita"

# Corners of the one-way pair in the centre (Sete de Setembro northbound,
# Quinze de Novembro southbound) between Av. Presidente Vargas and Rua Dom Pedro II.
T_CENTRO = (-300.0, -15.0)
D_VARGAS_QUINZE = (60.0, -50.0)
A_VARGAS_SETE = (170.0, -62.0)
B_PEDRO_SETE = (195.0, 170.0)
C_PEDRO_QUINZE = (85.0, 158.0)

ROUTE_101_OUT: Path = (
    T_CENTRO,
    [
        (VARGAS, [(-70.0, -38.0), D_VARGAS_QUINZE, A_VARGAS_SETE]),
        (SETE, [(182.0, 60.0), B_PEDRO_SETE]),
        (DOM_PEDRO, [(320.0, 185.0), (460.0, 215.0), (590.0, 262.0)]),
        (BEIRA_RIO, [(700.0, 340.0), (780.0, 450.0), (830.0, 600.0), (850.0, 780.0),
                     (900.0, 950.0), (990.0, 1100.0)]),
        (ZANOTTI, [(1120.0, 1180.0), (1260.0, 1230.0), (1380.0, 1330.0)]),
        (AV_SANTO_ANTONIO, [(1560.0, 1390.0), (1740.0, 1480.0), (1880.0, 1620.0),
                            (1960.0, 1800.0), (2000.0, 1990.0), (1980.0, 2180.0),
                            (1900.0, 2350.0), (1780.0, 2500.0), (1640.0, 2620.0)]),
        (SAO_BENEDITO, [(1500.0, 2700.0), (1350.0, 2760.0), (1200.0, 2850.0)]),
        (PALMEIRAS, [(1160.0, 3000.0), (1050.0, 3120.0), (900.0, 3180.0), (740.0, 3200.0)]),
        (SANTA_RITA, [(600.0, 3280.0), (470.0, 3380.0), (330.0, 3420.0)]),
    ],
)

# Inbound 101: the same streets in reverse, except that in the centre it cannot go
# down Rua Sete de Setembro (one-way northbound) and uses Rua Quinze de Novembro.
_CENTRE_IN: list[Leg] = [
    (DOM_PEDRO, [C_PEDRO_QUINZE]),
    (QUINZE, [(72.0, 50.0), D_VARGAS_QUINZE]),
    (VARGAS, [(-70.0, -38.0), T_CENTRO]),
]

ROUTE_201_OUT: Path = (
    (-280.0, 300.0),  # Praça da Matriz
    [
        (ANCHIETA, [(-420.0, 230.0), (-560.0, 210.0), (-700.0, 170.0)]),
        (VITORIA, [(-760.0, 40.0), (-800.0, -100.0), (-880.0, -230.0)]),
        (AV_VILA_NOVA, [(-1010.0, -350.0), (-1150.0, -450.0), (-1260.0, -590.0),
                        (-1330.0, -760.0), (-1450.0, -900.0), (-1600.0, -990.0)]),
        (CASTELO, [(-1640.0, -1150.0), (-1720.0, -1300.0), (-1850.0, -1400.0)]),
        (ACACIAS, [(-2000.0, -1430.0), (-2130.0, -1520.0), (-2200.0, -1680.0),
                   (-2230.0, -1860.0), (-2180.0, -2030.0), (-2070.0, -2160.0)]),
        (CRAVOS, [(-1950.0, -2290.0), (-1800.0, -2380.0), (-1640.0, -2420.0), (-1480.0, -2500.0)]),
    ],
)

# Landmarks used to name stops, in order along each street (outbound direction).
_JN_LANDMARKS = {
    VARGAS: ["Banco do Brasil", "Correios", "Mercado Municipal"],
    SETE: ["Câmara Municipal", "Igreja Matriz"],
    QUINZE: ["Fórum", "Praça Sete"],
    DOM_PEDRO: ["Escola Estadual Dom Pedro II", "Farmácia Popular", "Rua Belo Horizonte"],
    BEIRA_RIO: ["Ponte de Ferro", "Estação Ferroviária", "Posto de Saúde", "Ginásio Municipal",
                "Quadra Beira Rio", "Rua Colatina"],
    ZANOTTI: ["Cooperativa Agrícola", "Cemitério", "Rua Aracruz"],
    AV_SANTO_ANTONIO: ["Posto Rio Doce", "Escola Municipal Santo Antônio", "Capela Santo Antônio",
                       "Campo de Futebol", "Unidade de Saúde", "Rua dos Ipês", "Laticínio"],
    SAO_BENEDITO: ["Igreja São Benedito", "Mercearia Bela Vista", "Rua Linhares"],
    PALMEIRAS: ["Creche Municipal", "Praça das Palmeiras", "Rua Ibiraçu"],
    ANCHIETA: ["Prefeitura Municipal", "Hospital Municipal"],
    VITORIA: ["Rua Santa Teresa", "Escola Estadual Vitória", "Supermercado Neivense"],
    AV_VILA_NOVA: ["Passagem de Nível", "Serraria", "Posto da Polícia Militar",
                   "Escola Municipal Vila Nova", "Rua Guarapari", "Academia ao Ar Livre"],
    CASTELO: ["Rua Cachoeiro", "Igreja Batista", "Padaria Central"],
    ACACIAS: ["Praça Vila Nova", "Unidade de Saúde Vila Nova", "Rua das Margaridas", "Campo do Vila Nova"],
    CRAVOS: ["Igreja Assembleia de Deus", "Escola Municipal Vila Nova II", "Rua dos Lírios"],
    SANTA_RITA: ["Capela Santa Rita", "Rua Fundão", "Bar do Zé"],
}



JOAO_NEIVA = City(
    key="joao_neiva",
    name="João Neiva",
    state="ES",
    centre=(-19.757, -40.386),
    epsg=31984,  # SIRGAS 2000 / UTM zone 24S
    timezone="America/Sao_Paulo",
    agencies=(
        ("VNV", "Viação Neivense", "https://example.org/viacao-neivense"),
        ("TRD", "Transportes Rio Doce", "https://example.org/transportes-rio-doce"),
    ),
    timetabled=RouteDef(
        "101", "VNV", "Centro – Santo Antônio", "Via Avenida Beira Rio e Avenida Santo Antônio; horários fixos",
        "1B5E20", ROUTE_101_OUT, ("Terminal Centro", "Terminal Santo Antônio"), ("Santo Antônio", "Centro"),
        (5000.0, 6000.0), inbound_via=(B_PEDRO_SETE, _CENTRE_IN)),
    headway=RouteDef(
        "201", "TRD", "Centro – Vila Nova", "Via Rua Vitória e Avenida Vila Nova; por frequência",
        "0D47A1", ROUTE_201_OUT, ("Praça da Matriz (Centro)", "Terminal Vila Nova"), ("Vila Nova", "Centro"),
        (3500.0, 4500.0)),
    landmarks=_JN_LANDMARKS,
    # illustrative; the policy lists the same dates
    municipal_holidays={"20261208": "Feriado municipal", "20271208": "Feriado municipal"},
    feed_version="jn-sample-2026-2027",
    fleet=(
        ("JN-1011", "RQB4E17", "VNV", 70),
        ("JN-1012", "RQC1H82", "VNV", 70),
        ("JN-1013", "RQD7J35", "VNV", 62),
        ("JN-2011", "RQE3A59", "TRD", 44),
        ("JN-2012", "RQF8D04", "TRD", 44),
        ("JN-2013", "RQG2F66", "TRD", 52),
        ("JN-2014", "RQH5K21", "TRD", 40),
    ),
    expected_services=(("20261201", "DU"), ("20261205", "SAB"), ("20261208", "SAB"), ("20261225", "SAB"),
                       ("20261206", None), ("20260102", "DU"), ("20270326", "SAB"), ("20271231", "DU")),
)


# --------------------------------------------------------------------------------------
# Conselheiro Lafaiete, MG (a hilly old mining and railway town: winding streets; names
# made up after the region's history, the Arraial dos Carijós and the Vila de Queluz)
# --------------------------------------------------------------------------------------
LF_TIRADENTES = "Rua Tiradentes"
LF_FERROVIARIA = "Avenida Ferroviária"
LF_INCONFIDENTES = "Rua dos Inconfidentes"
LF_MINAS = "Avenida Minas Gerais"
LF_OURO_PRETO = "Rua Ouro Preto"
LF_SAO_JOAO = "Rua São João del-Rei"
LF_MANGANES = "Rua do Manganês"
LF_JARDIM = "Avenida Jardim Queluz"
LF_SANTA_EFIGENIA = "Rua Santa Efigênia"
LF_CARIJOS = "Avenida dos Carijós"
LF_CONGONHAS = "Rua Congonhas"
LF_MANGUEIRAS = "Rua das Mangueiras"
LF_ITAVERAVA = "Rua Itaverava"
LF_BANDEIRANTES = "Rua dos Bandeirantes"

LF_ROUTE_105_OUT: Path = (
    (-180.0, -40.0),  # Terminal Centro
    [
        (LF_TIRADENTES, [(-60.0, -30.0), (100.0, -20.0)]),
        (LF_FERROVIARIA, [(180.0, -120.0), (250.0, -250.0), (300.0, -390.0), (320.0, -540.0)]),
        (LF_INCONFIDENTES, [(280.0, -680.0), (200.0, -800.0), (90.0, -900.0), (-30.0, -980.0)]),
        (LF_MINAS, [(-170.0, -1060.0), (-320.0, -1120.0), (-480.0, -1160.0), (-650.0, -1230.0),
                    (-800.0, -1320.0), (-930.0, -1440.0), (-1040.0, -1580.0)]),
        (LF_OURO_PRETO, [(-1090.0, -1740.0), (-1110.0, -1900.0), (-1090.0, -2060.0), (-1020.0, -2200.0)]),
        (LF_SAO_JOAO, [(-900.0, -2320.0), (-760.0, -2410.0), (-600.0, -2470.0), (-440.0, -2560.0),
                       (-300.0, -2680.0)]),
        (LF_MANGANES, [(-220.0, -2830.0), (-180.0, -3000.0), (-200.0, -3170.0), (-260.0, -3330.0)]),
        (LF_JARDIM, [(-380.0, -3440.0), (-520.0, -3520.0), (-660.0, -3580.0), (-800.0, -3600.0)]),
    ],
)

LF_ROUTE_210_OUT: Path = (
    (-200.0, 300.0),  # Rodoviária
    [
        (LF_SANTA_EFIGENIA, [(-60.0, 380.0), (40.0, 500.0), (160.0, 600.0)]),
        (LF_CARIJOS, [(300.0, 680.0), (450.0, 760.0), (600.0, 820.0), (760.0, 900.0), (900.0, 1000.0),
                      (1020.0, 1120.0)]),
        (LF_CONGONHAS, [(1100.0, 1260.0), (1150.0, 1420.0), (1230.0, 1570.0)]),
        (LF_MANGUEIRAS, [(1360.0, 1680.0), (1500.0, 1760.0), (1650.0, 1800.0), (1800.0, 1880.0)]),
        (LF_ITAVERAVA, [(1900.0, 2000.0), (1960.0, 2150.0), (2060.0, 2280.0)]),
        (LF_BANDEIRANTES, [(2200.0, 2380.0), (2350.0, 2440.0), (2500.0, 2470.0), (2650.0, 2540.0)]),
    ],
)

_LF_LANDMARKS = {
    LF_TIRADENTES: ["Praça Tiradentes", "Catedral", "Banco do Brasil", "Correios"],
    LF_FERROVIARIA: ["Estação Ferroviária", "Oficinas da Rede", "Mercado Municipal", "Praça da Estação",
                     "Rua Itabirito"],
    LF_INCONFIDENTES: ["Fórum", "Escola Estadual Queluz", "Farmácia Central", "Rua Entre Rios", "Colégio Carijós"],
    LF_MINAS: ["Policlínica Municipal", "Supermercado Queluzense", "Posto da Polícia Militar", "Rua Cristiano Otoni",
               "Ginásio Poliesportivo", "Igreja São Sebastião", "Rua Belo Vale", "Academia ao Ar Livre"],
    LF_OURO_PRETO: ["Capela do Rosário", "Unidade de Saúde", "Padaria Mineira", "Rua Queluzito", "Escola Municipal"],
    LF_SAO_JOAO: ["Campo do Queluz", "Creche Municipal", "Igreja Batista", "Rua Casa Grande", "Mercearia Boa Vista"],
    LF_MANGANES: ["Antiga Mina", "Cooperativa dos Mineiros", "Rua Ouro Branco", "Escola Estadual do Manganês",
                  "Capela de Santana"],
    LF_JARDIM: ["Praça do Jardim", "Unidade de Saúde Jardim Queluz", "Rua das Orquídeas", "Campo do Jardim"],
    LF_SANTA_EFIGENIA: ["Igreja Santa Efigênia", "Prefeitura Municipal", "Câmara Municipal", "Rua Jeceaba"],
    LF_CARIJOS: ["Hospital Regional", "Escola Estadual Carijós", "Parque de Exposições", "Rua Lagoa Dourada",
                 "Posto Carijós", "Faculdade", "Rua Piranga"],
    LF_CONGONHAS: ["Igreja Assembleia de Deus", "Rua Catas Altas", "Mercearia do Alto", "Quadra Municipal"],
    LF_MANGUEIRAS: ["Praça das Mangueiras", "Escola Municipal Vila Carijós", "Rua dos Ipês", "Laticínio",
                    "Rua Resende Costa"],
    LF_ITAVERAVA: ["Capela de São José", "Unidade de Saúde Vila Carijós", "Rua São Brás", "Bar do Tião"],
    LF_BANDEIRANTES: ["Campo da Vila", "Igreja Nossa Senhora das Dores", "Rua Lamim", "Armazém Carijós",
                      "Rua Rio Espera"],
}

CONSELHEIRO_LAFAIETE = City(
    key="conselheiro_lafaiete",
    name="Conselheiro Lafaiete",
    state="MG",
    centre=(-20.660, -43.786),
    epsg=31983,  # SIRGAS 2000 / UTM zone 23S
    timezone="America/Sao_Paulo",
    agencies=(
        ("VQZ", "Viação Queluz", "https://example.org/viacao-queluz"),
        ("ECJ", "Expresso Carijós", "https://example.org/expresso-carijos"),
    ),
    timetabled=RouteDef(
        "105", "VQZ", "Centro – Jardim Queluz", "Via Avenida Minas Gerais e Rua do Manganês; horários fixos",
        "6A1B9A", LF_ROUTE_105_OUT, ("Terminal Centro", "Terminal Jardim Queluz"), ("Jardim Queluz", "Centro"),
        (5000.0, 6000.0)),
    headway=RouteDef(
        "210", "ECJ", "Rodoviária – Vila Carijós", "Via Avenida dos Carijós; por frequência",
        "E65100", LF_ROUTE_210_OUT, ("Rodoviária (Centro)", "Terminal Vila Carijós"), ("Vila Carijós", "Rodoviária"),
        (3500.0, 4500.0)),
    landmarks=_LF_LANDMARKS,
    # Nossa Senhora da Conceição, the patron saint (December 8): a municipal holiday, as
    # the local press reports; the city's anniversary (September 19) is no longer one.
    municipal_holidays={"20261208": "Nossa Senhora da Conceição", "20271208": "Nossa Senhora da Conceição"},
    feed_version="cl-sample-2026-2027",
    fleet=(
        ("CL-1051", "RGK3C41", "VQZ", 70),
        ("CL-1052", "RGL8E07", "VQZ", 70),
        ("CL-1053", "RGM1J66", "VQZ", 66),
        ("CL-1054", "RGN5B32", "VQZ", 66),
        ("CL-2101", "RHA4D28", "ECJ", 48),
        ("CL-2102", "RHB7F93", "ECJ", 48),
        ("CL-2103", "RHC2G50", "ECJ", 52),
        ("CL-2104", "RHD9K15", "ECJ", 44),
    ),
    expected_services=(("20261201", "DU"), ("20261205", "SAB"), ("20261208", "SAB"), ("20260421", "SAB"),
                       ("20261225", "SAB"), ("20261206", None), ("20270326", "SAB"), ("20270920", "DU"),
                       ("20271231", "DU")),
    # art. 17 reads the licensed lines: each bus its operator's one line, written out; and
    # CL-1054, a VQZ spare licensed for line 210 only, which the simulator's other_line
    # fault sends onto a run of 105 (a spare of the run's operator licensed elsewhere)
    fleet_lines=(("CL-1051", "105"), ("CL-1052", "105"), ("CL-1053", "105"), ("CL-1054", "210"),
                 ("CL-2101", "210"), ("CL-2102", "210"), ("CL-2103", "210"), ("CL-2104", "210")),
)


# --------------------------------------------------------------------------------------
# Canarana, MT (a planned town of the 1970s on the Xingu plateau, founded by settlers
# from Rio Grande do Sul: a grid of wide straight avenues)
# --------------------------------------------------------------------------------------
CN_BRASIL = "Avenida Brasil"
CN_IJUI = "Rua Ijuí"
CN_RIO_GRANDE = "Avenida Rio Grande do Sul"
CN_SANTA_ROSA = "Rua Santa Rosa"
CN_PIONEIROS = "Rua dos Pioneiros"
CN_XINGU = "Avenida Xingu"
CN_CULUENE = "Rua Culuene"
CN_PORTO_ALEGRE = "Rua Porto Alegre"
CN_COOPERATIVA = "Avenida da Cooperativa"
CN_IPES = "Rua dos Ipês"

CN_ROUTE_10_OUT: Path = (
    (-100.0, 0.0),  # Terminal Centro
    [
        (CN_BRASIL, [(400.0, 0.0), (900.0, 0.0), (1400.0, 0.0), (1900.0, 0.0)]),
        (CN_IJUI, [(1900.0, 400.0), (1900.0, 800.0)]),
        (CN_RIO_GRANDE, [(2300.0, 800.0), (2700.0, 800.0)]),
        (CN_SANTA_ROSA, [(2700.0, 1200.0), (2700.0, 1600.0), (2700.0, 2000.0)]),
        (CN_PIONEIROS, [(3000.0, 2000.0)]),
    ],
)

CN_ROUTE_20_OUT: Path = (
    (200.0, -250.0),  # Rodoviária
    [
        (CN_XINGU, [(200.0, -800.0), (200.0, -1350.0), (200.0, -1900.0), (200.0, -2450.0)]),
        (CN_CULUENE, [(-200.0, -2450.0), (-600.0, -2450.0)]),
        (CN_PORTO_ALEGRE, [(-600.0, -2950.0)]),
        (CN_COOPERATIVA, [(-1150.0, -2950.0)]),
    ],
)

_CN_LANDMARKS = {
    CN_BRASIL: ["Praça dos Pioneiros", "Igreja Luterana", "Banco do Brasil", "Prefeitura Municipal",
                "Câmara Municipal", "Rua Cruz Alta", "Supermercado Gaúcho", "Rua Palmeira das Missões"],
    CN_IJUI: ["Escola Estadual Xingu", "Farmácia Gaúcha", "Rua Passo Fundo", "Supermercado Canaranense"],
    CN_RIO_GRANDE: ["Hospital Municipal", "Ginásio de Esportes", "CTG Querência do Xingu", "Posto Araguaia",
                    "Rua Erechim", "Escola Municipal"],
    CN_SANTA_ROSA: ["Unidade de Saúde", "Igreja Católica", "Creche Municipal", "Rua Santo Ângelo",
                    "Mercearia Primavera", "Quadra Municipal"],
    CN_PIONEIROS: ["Praça da Primavera", "Escola Municipal Jardim Primavera", "Rua Carazinho", "Campo do Primavera"],
    CN_XINGU: ["Mercado Municipal", "Cooperativa Agrícola", "Rua Três de Maio", "Posto da Polícia Militar",
               "Escola Estadual Culuene", "Revenda de Máquinas", "Rua Santo Cristo"],
    CN_CULUENE: ["Armazém de Grãos", "Rua Panambi", "Oficina Mecânica", "Rua Tapera"],
    CN_PORTO_ALEGRE: ["Parque de Exposições", "Igreja Assembleia de Deus", "Rua Frederico Westphalen",
                      "Borracharia do Parque"],
    CN_COOPERATIVA: ["Silos da Cooperativa", "Unidade de Saúde Parque Xingu", "Rua Giruá", "Praça do Parque",
                     "Academia ao Ar Livre", "Rua Tenente Portela"],
    CN_IPES: ["Campo do Parque Xingu", "Capela São Cristóvão", "Rua Horizontina"],
}

CANARANA = City(
    key="canarana",
    name="Canarana",
    state="MT",
    centre=(-13.553, -52.271),
    epsg=31982,  # SIRGAS 2000 / UTM zone 22S
    timezone="America/Cuiaba",
    agencies=(
        ("VCN", "Viação Canaranense", "https://example.org/viacao-canaranense"),
        ("ECL", "Expresso Culuene", "https://example.org/expresso-culuene"),
    ),
    timetabled=RouteDef(
        "10", "VCN", "Centro – Jardim Primavera", "Via Avenida Rio Grande do Sul e Rua Santa Rosa; horários fixos",
        "2E7D32", CN_ROUTE_10_OUT, ("Terminal Centro", "Terminal Jardim Primavera"), ("Jardim Primavera", "Centro"),
        (5000.0, 6000.0)),
    headway=RouteDef(
        "20", "ECL", "Rodoviária – Parque Xingu", "Via Avenida Xingu e Avenida da Cooperativa; por frequência",
        "C62828", CN_ROUTE_20_OUT, ("Rodoviária (Centro)", "Terminal Parque Xingu"), ("Parque Xingu", "Rodoviária"),
        (3500.0, 4500.0)),
    landmarks=_CN_LANDMARKS,
    # As the municipality's decrees list them: the city's anniversary, the patron saint's
    # day and the Dia do Colono e Motorista (in 2026 all on weekends).
    municipal_holidays={
        f"{year}{day}": name for year in (2026, 2027)
        for day, name in (("0215", "Aniversário de Canarana"), ("0524", "Dia da Padroeira"),
                          ("0725", "Dia do Colono e Motorista"))},
    feed_version="cn-sample-2026-2027",
    fleet=(
        ("CN-1001", "RBX2A37", "VCN", 60),
        ("CN-1002", "RBY6C14", "VCN", 60),
        ("CN-1003", "RBZ9E82", "VCN", 54),
        ("CN-2001", "RCA3F45", "ECL", 44),
        ("CN-2002", "RCB5H70", "ECL", 44),
        ("CN-2003", "RCC8J19", "ECL", 40),
        ("CN-2004", "RCD1K63", "ECL", 40),
    ),
    expected_services=(("20261201", "DU"), ("20261205", "SAB"), ("20261206", None), ("20261120", "SAB"),
                       ("20261225", "SAB"), ("20270215", "SAB"), ("20270524", "SAB"), ("20270326", "SAB"),
                       ("20271231", "DU")),
)

CITIES: dict[str, City] = {city.key: city for city in (JOAO_NEIVA, CONSELHEIRO_LAFAIETE, CANARANA)}
