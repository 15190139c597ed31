"""Anexo I of Lei 867/1998 (João Neiva): the Código Disciplinar's infractions.

Every infraction as the law prints it (Capítulo II, "Da tipificação das infrações"):
its code, group, category ("Quanto ao pessoal de operação / ao veículo / à
Administração") and text, and whether fiscaliza detects it from telemetry or a
fiscal agent records it. Fines follow art. 3: group A 50, B 100, C 150, D 200 UFIR.

The text comes from an OCR of the published law. Where the OCR damaged it, the
correction is listed in OCR_CORRECTIONS (printed fragment -> restored text), and
tests/rules/joao_neiva/test_anexo_i.py checks every other text against the law letter for letter.
"""

from __future__ import annotations

from enum import Enum

from rules.law import Article, AutoForm, Law, Term, Terms, law_articles


class Category(str, Enum):
    PESSOAL = "pessoal de operação"
    VEICULO = "veículo"
    ADMINISTRACAO = "administração"


PESSOAL, VEICULO, ADMINISTRACAO = Category.PESSOAL, Category.VEICULO, Category.ADMINISTRACAO

# Art. 3: the fine of each group, in UFIR.
GROUP_FINES_UFIR = {"A": 50, "B": 100, "C": 150, "D": 200}


TITLE = "Lei Municipal nº 867/1998 (João Neiva)"


def _article(code: str, category: Category, automatic: bool, text: str) -> Article:
    group = code[0]
    return Article(
        code=code, text=text, automatic=automatic, group=group, fine=GROUP_FINES_UFIR[group],
        legal_basis=(f"{TITLE}, Anexo I – Código Disciplinar, Capítulo II, "
                     f"Grupo \u201c{group}\u201d, {code}; multa conforme art. 3º"),
        category=category.value)


# Printed (OCR) fragment -> restored text. D-18 and D-19 also lost their labels in the
# OCR ("a 18 -" and "- 19 -"); the word "passageiros" in D-19 is restored from arts. 43
# and 44 III ("contador de passageiros", "dispositivo de controle de passageiros").
OCR_CORRECTIONS: dict[str, tuple[str, str]] = {
    "A-10": ("ocupar, sentado, o lugar de passageiro no veículo. N ' E ? -2555 - FAX: (027) 258-2629",
             "ocupar, sentado, o lugar de passageiro no veículo."),
    "C-17": ("infecto- contagiosa grave, desde que tenha conhecimento do fato oficialmente | comunicado",
             "infecto-contagiosa grave, desde que tenha conhecimento do fato oficialmente comunicado"),
    "D-04": ("o usuário .", "o usuário."),
    "D-12": ("pre- estabelecida", "pré-estabelecida"),
    "D-19": ("numeração de et e tacógrafo, ou catraca violada. \u201cto q",
             "numeração de passageiros e tacógrafo, ou catraca violada."),
}

ANEXO_I: tuple[Article, ...] = (
    _article('A-01', PESSOAL, False,
            'não aguardar o embarque e desembarque de passageiros.'),
    _article('A-02', PESSOAL, False,
            'tratar os usuários com falta de urbanidade.'),
    _article('A-03', PESSOAL, False,
            'parar em pontos não autorizados ou estacionar fora do ponto inicial, intermediário ou final de linha.'),
    _article('A-04', PESSOAL, False,
            'apresentar-se sem estar devidamente trajado para o serviço (uniformizado).'),
    _article('A-05', PESSOAL, False,
            'deixar de exibir crachá de identificação.'),
    _article('A-06', PESSOAL, False,
            'deixar de atender, nos pontos, sinal de parada para embarque ou desembarque.'),
    _article('A-07', PESSOAL, True,
            'não completar o itinerário ou descumprir pontos de parada.'),
    _article('A-08', PESSOAL, False,
            'permitir atividade de vendedores ambulantes no interior do veículo.'),
    _article('A-09', PESSOAL, False,
            'permitir o transporte de animais, plantas, material inflamável ou corrosivo no interior do veículo, comprometendo o conforto e segurança dos passageiros.'),
    _article('A-10', PESSOAL, False,
            'ocupar, sentado, o lugar de passageiro no veículo.'),
    _article('A-11', VEICULO, False,
            'colocar no veículo acessórios, inscrições, decalques ou letreiros não autorizados.'),
    _article('A-12', VEICULO, False,
            'deixar de inscrever as legendas internas obrigatórias.'),
    _article('A-13', VEICULO, False,
            'circular o veículo sem iluminação suficiente no seu interior e exterior.'),
    _article('A-14', ADMINISTRACAO, False,
            'deixar de comunicar ao Órgão Gerencial alterações contratuais e mudanças de membros da Diretoria da empresa.'),
    _article('A-15', ADMINISTRACAO, False,
            'circular com veículos apresentando defeitos que possam comprometer a segurança e o conforto dos passageiros.'),
    _article('B-01', PESSOAL, False,
            'agredir verbalmente os usuários.'),
    _article('B-02', PESSOAL, False,
            'cobrar tarifa superior à autorizada ou sonegar troco.'),
    _article('B-03', PESSOAL, False,
            'para o veículo afastado do acostamento ou meio-fio para embarque e/ou desembarque de passageiros sem motivo justificado.'),
    _article('B-04', PESSOAL, True,
            'atrasar ou adiantar horário sem motivo justificado durante a operação.'),
    _article('B-05', PESSOAL, False,
            'fumar no interior do veículo.'),
    _article('B-06', PESSOAL, False,
            'colocar o veículo em movimento ou trafegar com as portas abertas.'),
    _article('B-07', PESSOAL, False,
            'parar ou arrancar bruscamente o veículo.'),
    _article('B-08', PESSOAL, False,
            'deixar de parar nos pontos quando o veículo não estiver lotado.'),
    _article('B-09', PESSOAL, False,
            'abandonar o veículo quando em serviço sem causa justificada.'),
    _article('B-10', PESSOAL, False,
            'conduzir o veículo com defeito em qualquer equipamento obrigatório.'),
    _article('B-11', PESSOAL, False,
            'desrespeitar as determinações da fiscalização do Órgão Gerencial.'),
    _article('B-12', PESSOAL, False,
            'abrir a(s) porta(s) para embarque com o veículo em movimento.'),
    _article('B-13', PESSOAL, False,
            'desviar ou interromper itinerários antes do ponto final.'),
    _article('B-14', PESSOAL, False,
            'deixar de manter a ordem no interior do veículo.'),
    _article('B-15', PESSOAL, False,
            'não preencher corretamente documentos solicitados durante a operação.'),
    _article('B-16', VEICULO, False,
            'balaústres quebrados ou inexistente.'),
    _article('B-17', VEICULO, False,
            'veículo sem iluminação do letreiro indicativo.'),
    _article('B-18', VEICULO, False,
            'extintor de incêndio inexistente ou descarregado.'),
    _article('B-19', VEICULO, False,
            'piso furado ou com revestimento estragado.'),
    _article('B-20', VEICULO, False,
            'expelir fumaça em níveis superiores ao permitido.'),
    _article('B-21', VEICULO, False,
            'transitar com falta da tampa do reservatório de combustível ou tampa defeituosa, derramando combustível na via pública.'),
    _article('B-22', VEICULO, False,
            'silencioso defeituoso ou com descarga livre.'),
    _article('B-23', VEICULO, False,
            'falta de campainha.'),
    _article('B-24', ADMINISTRACAO, False,
            'deixar de providenciar o transporte para os usuários em caso de avaria do veículo ou interrupção da viagem.'),
    _article('B-25', ADMINISTRACAO, False,
            'deixar de providenciar prontamente a retirada do veículo avariado da via pública após registro da ocorrência.'),
    _article('B-26', ADMINISTRACAO, False,
            'iniciar a operação com veículo apresentando falta de asseio.'),
    _article('C-01', PESSOAL, True,
            'dirigir com excesso de velocidade e/ou desobedecendo regras de trânsito.'),
    _article('C-02', PESSOAL, False,
            'interromper a viagem sem motivo justo.'),
    _article('C-03', PESSOAL, False,
            'transportar usuários sem cobrança de tarifa, ressalvadas as exceções previstas em legislação.'),
    _article('C-04', PESSOAL, False,
            'recusar-se a devolver troco prontamente.'),
    _article('C-05', ADMINISTRACAO, False,
            'manter em operação pessoal sem registro no Órgão Gerencial ou cujo afastamento tenha sido por ele determinado.'),
    _article('C-06', ADMINISTRACAO, False,
            'deixar de manter a frota reserva em condições de operação.'),
    _article('C-07', ADMINISTRACAO, False,
            'colocar em operação veículo não registrado no Órgão Gerencial.'),
    _article('C-08', ADMINISTRACAO, False,
            'realizar viagem ou transporte não autorizado.'),
    _article('C-09', ADMINISTRACAO, False,
            'abastecer ou efetuar manutenção do veículo com passageiros à bordo.'),
    _article('C-10', ADMINISTRACAO, False,
            'colocar nos veículos publicidade ou informações não autorizadas.'),
    _article('C-11', ADMINISTRACAO, False,
            'abastecer o veículo fora do local apropriado.'),
    _article('C-12', ADMINISTRACAO, False,
            'não fazer a correta identificação do usuário com direito a isenção tarifária ou deixar de conceder gratuidades previstas em lei.'),
    _article('C-13', ADMINISTRACAO, False,
            'permitir o transporte de passageiros sem o pagamento da tarifa.'),
    _article('C-14', ADMINISTRACAO, False,
            'permitir o transporte de produtos inflamáveis ou corrosivos.'),
    _article('C-15', ADMINISTRACAO, False,
            'deixar de afixar adequadamente as comunicações determinadas pelo Órgão Gerencial.'),
    _article('C-16', ADMINISTRACAO, False,
            'atrasar o horário no início da operação sem motivo justificado.'),
    _article('C-17', ADMINISTRACAO, False,
            'manter em serviço empregados portadores de doença infecto-contagiosa grave, desde que tenha conhecimento do fato oficialmente comunicado pelo meio adequado.'),
    _article('D-01', PESSOAL, False,
            'fazer uso de bebidas alcoólicas ou substâncias tóxicas ou durante a jornada de trabalho ou próximo de assumi-la.'),
    _article('D-02', PESSOAL, False,
            'portar arma de qualquer espécie ou trazê-la no veículo.'),
    _article('D-03', PESSOAL, False,
            'agredir verbalmente ou fisicamente, quando em serviço a preposto do Órgão Gerencial.'),
    _article('D-04', PESSOAL, False,
            'agredir fisicamente o usuário.'),
    _article('D-05', ADMINISTRACAO, False,
            'manter em operação veículos cuja desativação tenha sido determinada.'),
    _article('D-06', ADMINISTRACAO, False,
            'adulterar ou falsificar documentação ou fornecer dados que não correspondam à verdade.'),
    _article('D-07', ADMINISTRACAO, False,
            'deixar de atender ou dificultar a ação fiscalizadora ou as determinações do Órgão Gerencial.'),
    _article('D-08', ADMINISTRACAO, False,
            'deixar de socorrer usuário em caso de acidente.'),
    _article('D-09', ADMINISTRACAO, False,
            'deixar de apresentar ou retardar a entrega de dados ou elementos estatísticos, econômicos e contábeis solicitados pelo Órgão Gerencial.'),
    _article('D-10', ADMINISTRACAO, False,
            'deixar de colocar em operação a frota estabelecida.'),
    _article('D-11', ADMINISTRACAO, True,
            'deixar de cumprir os itinerários fixados.'),
    _article('D-12', ADMINISTRACAO, True,
            'deixar de realizar viagens com a frequência mínima pré-estabelecida para cada linha.'),
    _article('D-13', ADMINISTRACAO, True,
            'realizar viagens fora dos horários pré-estabelecidos (acrescentar multa de 100% do valor inicial para cada 10% das viagens realizadas fora dos horários previstos).'),
    _article('D-14', ADMINISTRACAO, False,
            'deixar de comunicar a retirada de veículo de tráfego ou o seu retorno.'),
    _article('D-15', ADMINISTRACAO, False,
            'entregar a direção do veículo a pessoa não habilitada como motorista de coletivos.'),
    _article('D-16', ADMINISTRACAO, False,
            'deixar de dispensar funcionário considerado inapto para o serviço, pelo Órgão Gerencial.'),
    _article('D-17', ADMINISTRACAO, False,
            'alterar itinerário ou pontos de parada sem o prévio consentimento do Órgão Gerencial.'),
    _article('D-18', ADMINISTRACAO, False,
            'deixar de cumprir determinação de Órgão Gerencial.'),
    _article('D-19', ADMINISTRACAO, True,
            'operar veículo sem dispositivo de controle de numeração de passageiros e tacógrafo, ou catraca violada.'),
    _article('D-20', ADMINISTRACAO, False,
            'utilizar equipamentos, máquinas, peças, acessórios, móveis, oficina de manutenção e pessoal vinculado ao serviço objeto da permissão e/ou concessão a serviço de terceiros.'),
    _article('D-21', ADMINISTRACAO, True,
            'utilizar veículos sem lacre na catraca ou com o mesmo violado.'),
    _article('D-22', ADMINISTRACAO, True,
            'deixar de realizar viagem programada sem motivo justificado.'),
    _article('D-23', ADMINISTRACAO, False,
            'praticar transporte coletivo intramunicipal sem delegação do Poder Concedente local.'),
)

ARTICLES: dict[str, Article] = law_articles(ANEXO_I)

# Arts. 5 § 3º, 7º, 7º § 3º and 8º of the law (dockets.workflow runs them).
TERMS = Terms(
    notificacao=Term(5, True, "art. 5º, § 3º"),
    defesa=Term(10, True, "art. 7º"),
    recurso=Term(10, True, "art. 7º, § 3º", "recurso ao titular do Órgão Gerencial"),
    pagamento=Term(10, False, "art. 8º"),
    pagamento_unless="salvo se apresentar defesa (art. 8º, I)",
)

# What the auto de infração cites (art. 5º and the articles it refers to).
AUTO = AutoForm(
    basis="Lei Municipal nº 867/1998, Anexo I — Código Disciplinar, art. 5º",
    liability="art. 1º do Código Disciplinar",
    fine="Grupo {group} (art. 3º)",
    equipment="art. 6º",
    copies="3 vias de igual teor (art. 5º, § 1º)",
    cumulation="Cometidas duas ou mais infrações, aplica-se a penalidade de cada uma (art. 10).",
    signature="A assinatura não significa reconhecimento da falta; a sua ausência não invalida o ato fiscal "
              "(art. 5º, § 2º).",
    deadlines_note="O pagamento conta do recebimento da notificação, salvo se apresentar defesa (art. 8º, I), ou da "
                   "decisão que não acolher o recurso (art. 8º, II); o questionamento judicial tem efeito suspensivo "
                   "(art. 8º, III).",
    concurrence="Aplicam-se as duas penalidades: cometidas duas ou mais infrações, independente de sua natureza, "
                "“aplicar-se-ão concomitantemente as penalidades correspondentes a cada uma delas” (art. 10).",
    duties=(("D-11", "o cumprimento do itinerário fixado para a linha"),
            ("A-07", "o atendimento de cada ponto de parada do itinerário")),
)

LAW = Law(code="joao-neiva", title=TITLE, fine_unit="UFIR", articles=ARTICLES, terms=TERMS, auto=AUTO,
          amnesty="art. 12", judicial_suspension="art. 8º, III")
