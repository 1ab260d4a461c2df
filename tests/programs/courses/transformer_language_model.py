# PyTorch tutorial "Language Modeling with nn.Transformer and torchtext" (transformer_tutorial.py): the model as
# written (PositionalEncoding, TransformerModel over nn.TransformerEncoder, nn.Transformer.generate_square_subsequent_mask),
# trained a few steps as its train() does (CrossEntropyLoss, SGD lr 5.0, StepLR, clip_grad_norm_ 0.5); WikiText-2 and the
# vocabulary replaced by random token ids of the same kind, small sizes so that it runs in a second.
import math
import torch
from torch import nn, Tensor
from torch.nn import TransformerEncoder, TransformerEncoderLayer


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int, nlayers: int, dropout: float = 0.5):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.init_weights()

    def init_weights(self) -> None:
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)

    def forward(self, src: Tensor, src_mask: Tensor = None) -> Tensor:
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        if src_mask is None:
            src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        output = self.transformer_encoder(src, src_mask)
        output = self.linear(output)
        return output


torch.manual_seed(0)
ntokens, emsize, d_hid, nlayers, nhead, dropout = 50, 16, 32, 2, 2, 0.2
model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout)
print(sum(p.numel() for p in model.parameters()))
data = torch.randint(0, ntokens, (20, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
model.train()
for i in range(3):
    src, tgt = data[:-1], data[1:]
    output = model(src)
    loss = criterion(output.view(-1, ntokens), tgt.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    print(f"| batch {i} | lr {scheduler.get_last_lr()[0]:02.2f} | loss {loss.item():5.2f} | ppl {math.exp(loss.item()):8.2f}")
model.eval()
with torch.no_grad():
    print(model(data[:5]).argmax(-1))
