"""Anexo I of Lei 867/1998 (João Neiva): the Código Disciplinar's infractions.

Every infraction as the law prints it (Capítulo II, "Da tipificação das infrações"):
its code, group, category ("Quanto ao pessoal de operação / ao veículo / à
Administração") and text, and whether fiscaliza detects it from telemetry or a
fiscal agent records it. Fines follow art. 3: group A 50, B 100, C 150, D 200 UFIR.

The text comes from an OCR of the published law. Where the OCR damaged it, the
correction is listed in OCR_CORRECTIONS (printed fragment -> restored text), and
tests/rules/test_anexo_i.py checks every other text against the law letter for letter.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Category(str, Enum):
    PESSOAL = "pessoal de operação"
    VEICULO = "veículo"
    ADMINISTRACAO = "administração"


PESSOAL, VEICULO, ADMINISTRACAO = Category.PESSOAL, Category.VEICULO, Category.ADMINISTRACAO

# Art. 3: the fine of each group, in UFIR.
GROUP_FINES_UFIR = {"A": 50, "B": 100, "C": 150, "D": 200}


@dataclass(frozen=True)
class Article:
    code: str  # as the law writes it, e.g. "D-11"
    category: Category
    automatic: bool  # detected from telemetry (True) or recorded by a fiscal agent
    text: str

    @property
    def group(self) -> str:
        return self.code[0]

    @property
    def fine_ufir(self) -> int:
        return GROUP_FINES_UFIR[self.group]

    @property
    def legal_basis(self) -> str:
        return (f"Lei Municipal nº 867/1998 (João Neiva), Anexo I – Código Disciplinar, "
                f"Capítulo II, Grupo \u201c{self.group}\u201d, {self.code}; multa conforme art. 3º")


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
    Article('A-01', PESSOAL, False,
            'não aguardar o embarque e desembarque de passageiros.'),
    Article('A-02', PESSOAL, False,
            'tratar os usuários com falta de urbanidade.'),
    Article('A-03', PESSOAL, False,
            'parar em pontos não autorizados ou estacionar fora do ponto inicial, intermediário ou final de linha.'),
    Article('A-04', PESSOAL, False,
            'apresentar-se sem estar devidamente trajado para o serviço (uniformizado).'),
    Article('A-05', PESSOAL, False,
            'deixar de exibir crachá de identificação.'),
    Article('A-06', PESSOAL, False,
            'deixar de atender, nos pontos, sinal de parada para embarque ou desembarque.'),
    Article('A-07', PESSOAL, True,
            'não completar o itinerário ou descumprir pontos de parada.'),
    Article('A-08', PESSOAL, False,
            'permitir atividade de vendedores ambulantes no interior do veículo.'),
    Article('A-09', PESSOAL, False,
            'permitir o transporte de animais, plantas, material inflamável ou corrosivo no interior do veículo, comprometendo o conforto e segurança dos passageiros.'),
    Article('A-10', PESSOAL, False,
            'ocupar, sentado, o lugar de passageiro no veículo.'),
    Article('A-11', VEICULO, False,
            'colocar no veículo acessórios, inscrições, decalques ou letreiros não autorizados.'),
    Article('A-12', VEICULO, False,
            'deixar de inscrever as legendas internas obrigatórias.'),
    Article('A-13', VEICULO, False,
            'circular o veículo sem iluminação suficiente no seu interior e exterior.'),
    Article('A-14', ADMINISTRACAO, False,
            'deixar de comunicar ao Órgão Gerencial alterações contratuais e mudanças de membros da Diretoria da empresa.'),
    Article('A-15', ADMINISTRACAO, False,
            'circular com veículos apresentando defeitos que possam comprometer a segurança e o conforto dos passageiros.'),
    Article('B-01', PESSOAL, False,
            'agredir verbalmente os usuários.'),
    Article('B-02', PESSOAL, False,
            'cobrar tarifa superior à autorizada ou sonegar troco.'),
    Article('B-03', PESSOAL, False,
            'para o veículo afastado do acostamento ou meio-fio para embarque e/ou desembarque de passageiros sem motivo justificado.'),
    Article('B-04', PESSOAL, True,
            'atrasar ou adiantar horário sem motivo justificado durante a operação.'),
    Article('B-05', PESSOAL, False,
            'fumar no interior do veículo.'),
    Article('B-06', PESSOAL, False,
            'colocar o veículo em movimento ou trafegar com as portas abertas.'),
    Article('B-07', PESSOAL, False,
            'parar ou arrancar bruscamente o veículo.'),
    Article('B-08', PESSOAL, False,
            'deixar de parar nos pontos quando o veículo não estiver lotado.'),
    Article('B-09', PESSOAL, False,
            'abandonar o veículo quando em serviço sem causa justificada.'),
    Article('B-10', PESSOAL, False,
            'conduzir o veículo com defeito em qualquer equipamento obrigatório.'),
    Article('B-11', PESSOAL, False,
            'desrespeitar as determinações da fiscalização do Órgão Gerencial.'),
    Article('B-12', PESSOAL, False,
            'abrir a(s) porta(s) para embarque com o veículo em movimento.'),
    Article('B-13', PESSOAL, False,
            'desviar ou interromper itinerários antes do ponto final.'),
    Article('B-14', PESSOAL, False,
            'deixar de manter a ordem no interior do veículo.'),
    Article('B-15', PESSOAL, False,
            'não preencher corretamente documentos solicitados durante a operação.'),
    Article('B-16', VEICULO, False,
            'balaústres quebrados ou inexistente.'),
    Article('B-17', VEICULO, False,
            'veículo sem iluminação do letreiro indicativo.'),
    Article('B-18', VEICULO, False,
            'extintor de incêndio inexistente ou descarregado.'),
    Article('B-19', VEICULO, False,
            'piso furado ou com revestimento estragado.'),
    Article('B-20', VEICULO, False,
            'expelir fumaça em níveis superiores ao permitido.'),
    Article('B-21', VEICULO, False,
            'transitar com falta da tampa do reservatório de combustível ou tampa defeituosa, derramando combustível na via pública.'),
    Article('B-22', VEICULO, False,
            'silencioso defeituoso ou com descarga livre.'),
    Article('B-23', VEICULO, False,
            'falta de campainha.'),
    Article('B-24', ADMINISTRACAO, False,
            'deixar de providenciar o transporte para os usuários em caso de avaria do veículo ou interrupção da viagem.'),
    Article('B-25', ADMINISTRACAO, False,
            'deixar de providenciar prontamente a retirada do veículo avariado da via pública após registro da ocorrência.'),
    Article('B-26', ADMINISTRACAO, False,
            'iniciar a operação com veículo apresentando falta de asseio.'),
    Article('C-01', PESSOAL, True,
            'dirigir com excesso de velocidade e/ou desobedecendo regras de trânsito.'),
    Article('C-02', PESSOAL, False,
            'interromper a viagem sem motivo justo.'),
    Article('C-03', PESSOAL, False,
            'transportar usuários sem cobrança de tarifa, ressalvadas as exceções previstas em legislação.'),
    Article('C-04', PESSOAL, False,
            'recusar-se a devolver troco prontamente.'),
    Article('C-05', ADMINISTRACAO, False,
            'manter em operação pessoal sem registro no Órgão Gerencial ou cujo afastamento tenha sido por ele determinado.'),
    Article('C-06', ADMINISTRACAO, False,
            'deixar de manter a frota reserva em condições de operação.'),
    Article('C-07', ADMINISTRACAO, False,
            'colocar em operação veículo não registrado no Órgão Gerencial.'),
    Article('C-08', ADMINISTRACAO, False,
            'realizar viagem ou transporte não autorizado.'),
    Article('C-09', ADMINISTRACAO, False,
            'abastecer ou efetuar manutenção do veículo com passageiros à bordo.'),
    Article('C-10', ADMINISTRACAO, False,
            'colocar nos veículos publicidade ou informações não autorizadas.'),
    Article('C-11', ADMINISTRACAO, False,
            'abastecer o veículo fora do local apropriado.'),
    Article('C-12', ADMINISTRACAO, False,
            'não fazer a correta identificação do usuário com direito a isenção tarifária ou deixar de conceder gratuidades previstas em lei.'),
    Article('C-13', ADMINISTRACAO, False,
            'permitir o transporte de passageiros sem o pagamento da tarifa.'),
    Article('C-14', ADMINISTRACAO, False,
            'permitir o transporte de produtos inflamáveis ou corrosivos.'),
    Article('C-15', ADMINISTRACAO, False,
            'deixar de afixar adequadamente as comunicações determinadas pelo Órgão Gerencial.'),
    Article('C-16', ADMINISTRACAO, False,
            'atrasar o horário no início da operação sem motivo justificado.'),
    Article('C-17', ADMINISTRACAO, False,
            'manter em serviço empregados portadores de doença infecto-contagiosa grave, desde que tenha conhecimento do fato oficialmente comunicado pelo meio adequado.'),
    Article('D-01', PESSOAL, False,
            'fazer uso de bebidas alcoólicas ou substâncias tóxicas ou durante a jornada de trabalho ou próximo de assumi-la.'),
    Article('D-02', PESSOAL, False,
            'portar arma de qualquer espécie ou trazê-la no veículo.'),
    Article('D-03', PESSOAL, False,
            'agredir verbalmente ou fisicamente, quando em serviço a preposto do Órgão Gerencial.'),
    Article('D-04', PESSOAL, False,
            'agredir fisicamente o usuário.'),
    Article('D-05', ADMINISTRACAO, False,
            'manter em operação veículos cuja desativação tenha sido determinada.'),
    Article('D-06', ADMINISTRACAO, False,
            'adulterar ou falsificar documentação ou fornecer dados que não correspondam à verdade.'),
    Article('D-07', ADMINISTRACAO, False,
            'deixar de atender ou dificultar a ação fiscalizadora ou as determinações do Órgão Gerencial.'),
    Article('D-08', ADMINISTRACAO, False,
            'deixar de socorrer usuário em caso de acidente.'),
    Article('D-09', ADMINISTRACAO, False,
            'deixar de apresentar ou retardar a entrega de dados ou elementos estatísticos, econômicos e contábeis solicitados pelo Órgão Gerencial.'),
    Article('D-10', ADMINISTRACAO, False,
            'deixar de colocar em operação a frota estabelecida.'),
    Article('D-11', ADMINISTRACAO, True,
            'deixar de cumprir os itinerários fixados.'),
    Article('D-12', ADMINISTRACAO, True,
            'deixar de realizar viagens com a frequência mínima pré-estabelecida para cada linha.'),
    Article('D-13', ADMINISTRACAO, True,
            'realizar viagens fora dos horários pré-estabelecidos (acrescentar multa de 100% do valor inicial para cada 10% das viagens realizadas fora dos horários previstos).'),
    Article('D-14', ADMINISTRACAO, False,
            'deixar de comunicar a retirada de veículo de tráfego ou o seu retorno.'),
    Article('D-15', ADMINISTRACAO, False,
            'entregar a direção do veículo a pessoa não habilitada como motorista de coletivos.'),
    Article('D-16', ADMINISTRACAO, False,
            'deixar de dispensar funcionário considerado inapto para o serviço, pelo Órgão Gerencial.'),
    Article('D-17', ADMINISTRACAO, False,
            'alterar itinerário ou pontos de parada sem o prévio consentimento do Órgão Gerencial.'),
    Article('D-18', ADMINISTRACAO, False,
            'deixar de cumprir determinação de Órgão Gerencial.'),
    Article('D-19', ADMINISTRACAO, True,
            'operar veículo sem dispositivo de controle de numeração de passageiros e tacógrafo, ou catraca violada.'),
    Article('D-20', ADMINISTRACAO, False,
            'utilizar equipamentos, máquinas, peças, acessórios, móveis, oficina de manutenção e pessoal vinculado ao serviço objeto da permissão e/ou concessão a serviço de terceiros.'),
    Article('D-21', ADMINISTRACAO, True,
            'utilizar veículos sem lacre na catraca ou com o mesmo violado.'),
    Article('D-22', ADMINISTRACAO, True,
            'deixar de realizar viagem programada sem motivo justificado.'),
    Article('D-23', ADMINISTRACAO, False,
            'praticar transporte coletivo intramunicipal sem delegação do Poder Concedente local.'),
)

ARTICLES: dict[str, Article] = {article.code: article for article in ANEXO_I}
