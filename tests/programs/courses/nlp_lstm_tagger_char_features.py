# The sequence-models tutorial's exercise, "Augmenting the LSTM part-of-speech tagger with character-level
# features", with a student's solution: a character nn.LSTM over each word's embedded letters whose final hidden
# state is concatenated (torch.cat) to the word embedding before the word LSTM. The tutorial's data, 40 epochs.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1)


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


training_data = [
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
]
word_to_ix = {}
char_to_ix = {}
for sent, tags in training_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
        for c in word:
            if c not in char_to_ix:
                char_to_ix[c] = len(char_to_ix)
print(word_to_ix)
print(char_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2}

WORD_EMBEDDING_DIM = 5
CHAR_EMBEDDING_DIM = 3
CHAR_HIDDEN_DIM = 3
HIDDEN_DIM = 6


class LSTMTagger(nn.Module):

    def __init__(self, word_embedding_dim, char_embedding_dim, char_hidden_dim, hidden_dim,
                 vocab_size, charset_size, tagset_size):
        super(LSTMTagger, self).__init__()
        self.char_hidden_dim = char_hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, word_embedding_dim)
        self.char_embeddings = nn.Embedding(charset_size, char_embedding_dim)
        self.char_lstm = nn.LSTM(char_embedding_dim, char_hidden_dim)
        self.lstm = nn.LSTM(word_embedding_dim + char_hidden_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def char_representation(self, chars):
        embeds = self.char_embeddings(chars)
        _, (h_n, c_n) = self.char_lstm(embeds.view(len(chars), 1, -1))
        return h_n.view(-1)

    def forward(self, sentence, words):
        word_embeds = self.word_embeddings(sentence)
        char_reps = torch.stack([self.char_representation(prepare_sequence(w, char_to_ix)) for w in words])
        embeds = torch.cat([word_embeds, char_reps], dim=1)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


model = LSTMTagger(WORD_EMBEDDING_DIM, CHAR_EMBEDDING_DIM, CHAR_HIDDEN_DIM, HIDDEN_DIM,
                   len(word_to_ix), len(char_to_ix), len(tag_to_ix))
print(model)
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)

with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs, training_data[0][0])
    print(tag_scores)

for epoch in range(40):
    total = 0.0
    for sentence, tags in training_data:
        model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)
        tag_scores = model(sentence_in, sentence)
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: {total:.6f}")

with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs, training_data[0][0])
    print(tag_scores)
    print([list(tag_to_ix)[i] for i in tag_scores.argmax(dim=1).tolist()])
