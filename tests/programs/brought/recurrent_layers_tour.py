# A program people bring (issue 21): written as students write them, checked against PyTorch's stdout
import torch
import torch.nn as nn
torch.manual_seed(0)
rnn = nn.RNN(input_size=4, hidden_size=6, num_layers=2, batch_first=True, dropout=0.0)
x = torch.randn(3, 5, 4)
out, h = rnn(x)
print(out.shape, h.shape)
lstm = nn.LSTM(4, 6, num_layers=1, bidirectional=True)
o, (h, c) = lstm(torch.randn(5, 3, 4))
print(o.shape, h.shape)
cell = nn.LSTMCell(4, 6); hx, cx = cell(torch.randn(3, 4)); print(hx.shape)
gcell = nn.GRUCell(4, 6); print(gcell(torch.randn(3, 4)).shape)
emb = nn.Embedding(10, 4, padding_idx=0)
print(emb.weight[0], emb(torch.tensor([[1, 0, 2]])).shape)
